package schema

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// RunHelp runs prog, without a shell, with args, the schema's subcommand
// and --help, and returns its standard output and the command line it
// ran (for messages). columns is the terminal width it gets (COLUMNS; a
// wide one keeps one help row per option); timeout bounds the run.
func (s *Schema) RunHelp(ctx context.Context, prog string, args []string, timeout time.Duration, columns int) (help []byte, source string, err error) {
	argv := append(append(append([]string{}, args...), s.Command...), "--help")
	source = strings.Join(append([]string{prog}, argv...), " ")
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, argv...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("COLUMNS=%d", columns), "NO_COLOR=1", "TERM=dumb")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, source, fmt.Errorf("%s --help: %w", prog, ctx.Err())
		}
		var ee *exec.ExitError
		msg := strings.TrimSpace(stderr.String())
		if errors.As(err, &ee) && msg != "" {
			return nil, source, fmt.Errorf("%s --help: %w: %s", prog, err, lastLines(msg, 5))
		}
		return nil, source, fmt.Errorf("%s --help: %w", prog, err)
	}
	return stdout.Bytes(), source, nil
}

// lastLines joins the last n lines of s with " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
