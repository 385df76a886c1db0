package configs

import (
	"cmp"
	"context"
	"fmt"
)

// ChangeSides are the two sides of a perf-changelog.yaml change, each a
// file or a git ref holding ChangelogFile, and where the base revision's
// master configs and runners.yaml come from (for append-only entries).
type ChangeSides struct {
	BaseFile, BaseRef string
	HeadFile, HeadRef string
	// ChangelogFile is the path of perf-changelog.yaml inside the
	// repository, for the refs.
	ChangelogFile string
	// BaseConfigFiles and BaseRunnerConfig are the base revision's master
	// configs and runners.yaml as files. Without them and with BaseRef,
	// they are read from git at BaseRef.
	BaseConfigFiles  []string
	BaseRunnerConfig string
	// Git returns the content of path at ref; nil means "git show".
	Git GitShow
}

// Read reads the changelog before (base) and after (head) the change.
func (c *ChangeSides) Read(ctx context.Context) (base, head Source, err error) {
	if base, err = ReadChangelog(ctx, c.Git, c.BaseFile, c.BaseRef, c.ChangelogFile); err != nil {
		return Source{}, Source{}, sideError("--base-file", c.BaseFile, err)
	}
	if head, err = ReadChangelog(ctx, c.Git, c.HeadFile, c.HeadRef, c.ChangelogFile); err != nil {
		return Source{}, Source{}, sideError("--head-file", c.HeadFile, err)
	}
	return base, head, nil
}

// sideError names the flag of a side read from a file (none from git).
func sideError(flag, file string, err error) error {
	if file == "" {
		return err
	}
	return fmt.Errorf("%s: %w", flag, err)
}

// Names are the sides as a result records them: the ref, else the file.
func (c *ChangeSides) Names() (base, head string) {
	return cmp.Or(c.BaseRef, c.BaseFile), cmp.Or(c.HeadRef, c.HeadFile)
}

// BaseLoader returns the loader of the base revision's master configs
// and runners.yaml: from BaseConfigFiles and BaseRunnerConfig when either
// is named (the head's, headFiles and headRunner, stand in for the one
// that is not), else from git at BaseRef; nil when there is neither.
func (c *ChangeSides) BaseLoader(ctx context.Context, headFiles []string, headRunner string) func() (*Masters, *Runners, error) {
	switch {
	case len(c.BaseConfigFiles) > 0 || c.BaseRunnerConfig != "":
		return func() (*Masters, *Runners, error) {
			files := c.BaseConfigFiles
			if len(files) == 0 {
				files = headFiles
			}
			return Load(files, cmp.Or(c.BaseRunnerConfig, headRunner))
		}
	case c.BaseRef != "":
		return func() (*Masters, *Runners, error) {
			return LoadAt(ctx, c.Git, c.BaseRef, headFiles, headRunner)
		}
	}
	return nil
}
