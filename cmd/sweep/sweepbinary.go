package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sweep/internal/selfexe"
)

// sweepBinary is the sweep a launch mounts into the image (--sweep-binary,
// else this one), as an absolute path to a file.
func sweepBinary(given string) (string, error) {
	bin := given
	if bin == "" {
		var err error
		if bin, err = selfexe.Path(); err != nil {
			return "", err
		}
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return "", &FlagError{Err: fmt.Errorf("--sweep-binary %s: not a file", bin)}
	}
	return bin, nil
}
