package configs

import (
	"context"
	"fmt"

	"sweep/internal/gitfile"
	"sweep/internal/inputfile"
)

// Load reads and checks master configs and runners.yaml from disk, or the
// copies built into sweep for empty names (DefaultMasterFiles,
// DefaultRunnerFile).
func Load(masterFiles []string, runnerFile string) (*Masters, *Runners, error) {
	srcs, err := ReadSources(masterFiles, DefaultMasterFiles)
	if err != nil {
		return nil, nil, err
	}
	m, err := ParseMasters(srcs...)
	if err != nil {
		return nil, nil, err
	}
	var runnerPaths []string
	if runnerFile != "" {
		runnerPaths = []string{runnerFile}
	}
	rs, err := ReadSources(runnerPaths, []string{DefaultRunnerFile})
	if err != nil {
		return nil, nil, err
	}
	r, err := ParseRunners(rs[0])
	if err != nil {
		return nil, nil, err
	}
	return m, r, nil
}

// GitShow returns the content of path at a git ref; nil means git show
// in the working directory's repository (gitfile.Show).
type GitShow func(ctx context.Context, ref, path string) ([]byte, error)

func (show GitShow) read(ctx context.Context, ref, path string) (Source, error) {
	if show == nil {
		show = gitfile.Show
	}
	data, err := show(ctx, ref, path)
	if err != nil {
		return Source{}, err
	}
	return Source{Name: ref + ":" + path, Data: data}, nil
}

// LoadAt reads and checks master configs and runners.yaml as they are at
// the git ref; empty names are the default paths (DefaultMasterFiles,
// DefaultRunnerFile). Sources are named "ref:path".
func LoadAt(ctx context.Context, show GitShow, ref string, masterFiles []string, runnerFile string) (*Masters, *Runners, error) {
	if len(masterFiles) == 0 {
		masterFiles = DefaultMasterFiles
	}
	srcs := make([]Source, 0, len(masterFiles))
	for _, f := range masterFiles {
		src, err := show.read(ctx, ref, f)
		if err != nil {
			return nil, nil, err
		}
		srcs = append(srcs, src)
	}
	m, err := ParseMasters(srcs...)
	if err != nil {
		return nil, nil, err
	}
	if runnerFile == "" {
		runnerFile = DefaultRunnerFile
	}
	src, err := show.read(ctx, ref, runnerFile)
	if err != nil {
		return nil, nil, err
	}
	r, err := ParseRunners(src)
	if err != nil {
		return nil, nil, err
	}
	return m, r, nil
}

// ReadChangelog reads a perf-changelog.yaml from file when one is named,
// else the repository's path at the git ref.
func ReadChangelog(ctx context.Context, show GitShow, file, ref, path string) (Source, error) {
	if file != "" {
		data, err := inputfile.Read(file, inputfile.ConfigYAML)
		if err != nil {
			return Source{}, fmt.Errorf("read changelog: %w", err)
		}
		return Source{Name: file, Data: data}, nil
	}
	return show.read(ctx, ref, path)
}
