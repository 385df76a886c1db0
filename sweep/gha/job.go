package gha

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/inputfile"
	"sweep/recipes"
)

// jobWant is what a job file should be, for its errors.
const jobWant = `one job of "sweep ci matrix" (an element of its jobs.<family> lists)`

// ParseJob reads one job of the fan-out matrix (a Job as `sweep ci
// matrix` prints it), the contents of file, and its matrix row: JSON
// that does not decode is a *configs.Error at its line and column
// (configs.DecodeJSON); a job that cannot run here (multi-node, or a
// model whose remote code is not allowed) is an error prefixed with the
// job's config key.
func ParseJob(file string, data []byte) (*Job, *matrix.Row, error) {
	var job Job
	if err := configs.DecodeJSON(file, data, &job, jobWant); err != nil {
		return nil, nil, err
	}
	if job.ConfigKey == "" || len(job.Points) == 0 || len(job.Config) == 0 {
		return nil, nil, errors.New("a job needs config-key, config and points")
	}
	var row matrix.Row
	if err := row.UnmarshalJSON(job.Config); err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	if row.Kind.MultiNode() {
		return nil, nil, &JobError{Key: job.ConfigKey, Err: errors.New("multi-node points are not supported yet")}
	}
	if err := recipes.CheckRemoteCode(row.Model); err != nil {
		return nil, nil, &JobError{Key: job.ConfigKey, Err: err}
	}
	return &job, &row, nil
}

// ReadJob reads the job file path (ParseJob); its errors name the file.
func ReadJob(path string) (*Job, *matrix.Row, error) {
	data, err := inputfile.Read(path, inputfile.SmallJSON)
	if err != nil {
		return nil, nil, fmt.Errorf("--job: %w", err)
	}
	job, row, err := ParseJob(path, data)
	if _, ok := errors.AsType[*JobError](err); ok {
		return nil, nil, err
	}
	if _, ok := errors.AsType[*configs.Error](err); ok {
		return nil, nil, fmt.Errorf("--job: %w", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--job %s: %w", path, err)
	}
	return job, row, nil
}

// JobError is a job that cannot run here.
type JobError struct {
	Key string // the job's config key
	Err error
}

func (e *JobError) Error() string { return "job " + e.Key + ": " + e.Err.Error() }
func (e *JobError) Unwrap() error { return e.Err }

// CheckOutput checks, before anything runs, that AppendOutput can append
// to path: an existing regular file open for writing, or a new one in an
// existing directory (a character device such as /dev/null will do). It
// creates and changes nothing.
func CheckOutput(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if di, derr := os.Stat(filepath.Dir(path)); derr != nil || !di.IsDir() {
			return fmt.Errorf("its directory %s does not exist: give a file in an existing directory ($GITHUB_OUTPUT)", filepath.Dir(path))
		}
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("is a directory: give the file to append to ($GITHUB_OUTPUT)")
	case !fi.Mode().IsRegular() && fi.Mode()&os.ModeCharDevice == 0:
		return fmt.Errorf("is not a regular file (%s): give the file to append to ($GITHUB_OUTPUT)", fi.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("cannot be written: %w", err)
	}
	return f.Close()
}

// AppendOutput appends key=value to a $GITHUB_OUTPUT file.
func AppendOutput(path, key, value string) error {
	if strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("%s %q: a GitHub output value must be one line", key, value)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s=%s\n", key, value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
