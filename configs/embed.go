package configs

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"sweep/internal/inputfile"
)

//go:embed amd-master.yaml nvidia-master.yaml runners.yaml golden-al/*.yaml ab/*.yaml window-provenance.csv
var embedded embed.FS

// Embedded returns the config files shipped inside the sweep binary:
// amd-master.yaml, nvidia-master.yaml, runners.yaml, golden-al/*.yaml,
// the A/B legs ab/*.yaml and window-provenance.csv (the same files as the
// repository's configs/ directory). Commands use
// them when no path is given, so sweep runs from any directory.
func Embedded() fs.FS { return embedded }

// Default file names. Errors in the embedded files are reported under these
// names, which are also the files' paths from the repository root.
const (
	DefaultRunnerFile  = "configs/runners.yaml"
	DefaultGoldenALDir = "configs/golden-al"
)

// DefaultMasterFiles names the embedded master configs in load order (AMD,
// then NVIDIA). Treat it as read-only.
var DefaultMasterFiles = []string{"configs/amd-master.yaml", "configs/nvidia-master.yaml"}

// embeddedName maps a default name to its name inside Embedded().
func embeddedName(name string) string { return strings.TrimPrefix(name, "configs/") }

// DefaultMasters loads the embedded master configs.
func DefaultMasters() (*Masters, error) {
	srcs := make([]Source, 0, 2)
	for _, name := range DefaultMasterFiles {
		data, err := fs.ReadFile(embedded, embeddedName(name))
		if err != nil {
			return nil, fmt.Errorf("embedded %s: %w", name, err)
		}
		srcs = append(srcs, Source{Name: name, Data: data})
	}
	return ParseMasters(srcs...)
}

// DefaultRunners loads the embedded runners.yaml.
func DefaultRunners() (*Runners, error) {
	data, err := fs.ReadFile(embedded, embeddedName(DefaultRunnerFile))
	if err != nil {
		return nil, fmt.Errorf("embedded %s: %w", DefaultRunnerFile, err)
	}
	return ParseRunners(Source{Name: DefaultRunnerFile, Data: data})
}

// DefaultGoldenAL loads the embedded golden AL curves.
func DefaultGoldenAL() (*GoldenAL, error) {
	g, err := LoadGoldenAL(embedded, embeddedName(DefaultGoldenALDir))
	if err != nil {
		return nil, err
	}
	for _, s := range g.Sets {
		s.File = "configs/" + s.File
	}
	return g, nil
}

// ReadSources reads files from disk as Sources, or, when paths is empty,
// returns the embedded files named by defaults (DefaultMasterFiles or
// []string{DefaultRunnerFile}). Unreadable files are reported as *Error.
func ReadSources(paths, defaults []string) ([]Source, error) {
	if len(paths) == 0 {
		srcs := make([]Source, 0, len(defaults))
		for _, name := range defaults {
			data, err := fs.ReadFile(embedded, embeddedName(name))
			if err != nil {
				return nil, fmt.Errorf("embedded %s: %w", name, err)
			}
			srcs = append(srcs, Source{Name: name, Data: data})
		}
		return srcs, nil
	}
	srcs := make([]Source, 0, len(paths))
	var errs []*Error
	for _, p := range paths {
		data, err := inputfile.Read(p, inputfile.ConfigYAML)
		if err != nil {
			errs = append(errs, &Error{File: p, Line: 1, Col: 1, Msg: fmt.Sprintf("cannot read file: %v", err)})
			continue
		}
		srcs = append(srcs, Source{Name: p, Data: data})
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return srcs, nil
}
