// Package gitfile reads a file as it is at a git revision, running git as
// an argv (never through a shell) with the revision after --end-of-options,
// so a ref that looks like an option cannot reach git as one.
//
//	data, err := gitfile.Show(ctx, "origin/main", "perf-changelog.yaml")
//	if errors.Is(err, gitfile.ErrNotExist) { ... the file is new ... }
package gitfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode"
)

// ErrNotExist is a path that does not exist at the revision (the revision
// itself exists). Any other failure of git is an error of its own, never
// an empty file.
var ErrNotExist = errors.New("does not exist at that revision")

// RefError is a revision git cannot be given.
type RefError struct {
	Ref string
	Msg string
}

func (e *RefError) Error() string { return fmt.Sprintf("git ref %q: %s", e.Ref, e.Msg) }

// CheckRef rejects refs that are empty, start with '-', or hold spaces or
// control characters.
func CheckRef(ref string) error {
	switch {
	case ref == "":
		return &RefError{Ref: ref, Msg: "empty; name a branch, tag or commit"}
	case strings.HasPrefix(ref, "-"):
		return &RefError{Ref: ref, Msg: "starts with '-', so git would read it as an option; name a branch, tag or commit"}
	case strings.IndexFunc(ref, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return &RefError{Ref: ref, Msg: "holds white space or control characters"}
	}
	return nil
}

// Show returns the bytes of path (a file inside a git work tree, relative
// to the current directory or absolute) at ref.
func Show(ctx context.Context, ref, path string) ([]byte, error) {
	if err := CheckRef(ref); err != nil {
		return nil, err
	}
	dir, file := filepath.Split(filepath.Clean(path))
	if dir == "" {
		dir = "."
	}
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "show", "--end-of-options", ref+":./"+file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading %s at %s needs git: %w", path, ref, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "exists on disk, but not in") || strings.Contains(msg, "does not exist in") {
			return nil, fmt.Errorf("%s at %s: %w", path, ref, ErrNotExist)
		}
		return nil, fmt.Errorf("git show %s:%s: %s", ref, path, msg)
	}
	return stdout.Bytes(), nil
}
