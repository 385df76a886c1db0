package configs

import (
	"context"
	"errors"
	"fmt"
	"os"

	"sweep/internal/gitfile"
	"sweep/internal/inputfile"
	"sweep/internal/plural"
)

// DefaultChangelog is the changelog ValidateFiles reads when none is
// named: perf-changelog.yaml in the working directory, when it is there.
const DefaultChangelog = "perf-changelog.yaml"

// ValidateFiles name the files Validate checks.
type ValidateFiles struct {
	ConfigFiles  []string // master configs; empty: the embedded ones
	RunnerConfig string   // runners.yaml; empty: the embedded one
	// Changelog is the changelog to check; empty: DefaultChangelog when
	// it exists, else none (Read's note says so).
	Changelog string
	// ChangelogBase (a file) or BaseRef (a git ref holding Changelog) is
	// the changelog before the change: the append-only rules apply.
	ChangelogBase string
	BaseRef       string
	// Git returns the content of path at ref; nil means "git show".
	Git GitShow
}

// ErrNoChangelog is a changelog base given while there is no changelog to
// compare with it: none named and no DefaultChangelog here.
var ErrNoChangelog = errors.New("a changelog base was given but there is no ./" + DefaultChangelog + "; name it with --changelog")

// Read reads every file Validate needs. Unreadable files are errors (a
// changelog base at a ref that has no changelog yet is empty: every entry
// is new); note explains a changelog not checked.
func (f ValidateFiles) Read(ctx context.Context) (in ValidateInput, note string, err error) {
	if in.Masters, err = ReadSources(f.ConfigFiles, DefaultMasterFiles); err != nil {
		return in, "", err
	}
	var runnerPaths []string
	if f.RunnerConfig != "" {
		runnerPaths = []string{f.RunnerConfig}
	}
	runners, err := ReadSources(runnerPaths, []string{DefaultRunnerFile})
	if err != nil {
		return in, "", err
	}
	in.Runners = runners[0]
	path := f.Changelog
	if path == "" {
		if _, err := os.Stat(DefaultChangelog); err != nil {
			if f.ChangelogBase != "" || f.BaseRef != "" {
				return in, "", ErrNoChangelog
			}
			return in, fmt.Sprintf("note: no ./%s here; changelog not checked (use --changelog)", DefaultChangelog), nil
		}
		path = DefaultChangelog
	}
	data, err := inputfile.Read(path, inputfile.ConfigYAML)
	if err != nil {
		return in, "", fmt.Errorf("read changelog: %w", err)
	}
	in.Changelog = &Source{Name: path, Data: data}
	switch {
	case f.ChangelogBase != "":
		base, err := inputfile.Read(f.ChangelogBase, inputfile.ConfigYAML)
		if err != nil {
			return in, "", fmt.Errorf("read changelog base: %w", err)
		}
		in.ChangelogBase = &Source{Name: f.ChangelogBase, Data: base}
	case f.BaseRef != "":
		base, err := f.Git.read(ctx, f.BaseRef, path)
		switch {
		case errors.Is(err, gitfile.ErrNotExist):
			base = Source{Name: f.BaseRef + ":" + path} // the change adds the file: every entry is new
		case err != nil:
			return in, "", fmt.Errorf("--changelog-base-ref: %w", err)
		}
		in.ChangelogBase = &base
	}
	return in, "", nil
}

// Err is nil when r found no problem, else it counts the problems and the
// files they are in.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	files := map[string]bool{}
	for _, p := range r.Problems {
		files[p.File] = true
	}
	return fmt.Errorf("%s in %s", plural.Count(len(r.Problems), "problem", "problems"), plural.Count(len(files), "file", "files"))
}

// Summary is the line of a check of in that found no problem: what was
// checked.
func (r *Report) Summary(in ValidateInput) string {
	msg := fmt.Sprintf("ok: %d master configs in %s, %d runner labels", r.MasterEntries,
		plural.Count(len(in.Masters), "file", "files"), r.RunnerLabels)
	if in.Changelog != nil {
		msg += fmt.Sprintf(", %d changelog entries (%d new", r.ChangelogEntries, r.NewEntries)
		if r.Corrections > 0 {
			msg += fmt.Sprintf(", %d pr-link corrections", r.Corrections)
		}
		msg += ")"
	}
	return msg
}
