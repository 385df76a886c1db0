package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// OpenFile is os.OpenFile for a file sweep keeps in a directory it was
// given (a lock, a journal, an append-only log), never through a symbolic
// link: a directory received from elsewhere could otherwise make sweep
// truncate or append to any file the user can write. A link in path's
// place is refused with a *LinkError.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
	if errors.Is(err, syscall.ELOOP) {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, &LinkError{Path: path}
		}
	}
	return f, err
}

// LinkError is a symbolic link where sweep keeps a file of its own.
type LinkError struct {
	Path string
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link: sweep does not write through links in its directories (remove it, or use another directory)", e.Path)
}
