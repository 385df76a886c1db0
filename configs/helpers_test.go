package configs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wantErr describes one expected *Error: its line, its key path and a
// substring of its message.
type wantErr struct {
	line int
	key  string
	msg  string
}

func (w wantErr) String() string { return fmt.Sprintf("line %d key %q msg ~%q", w.line, w.key, w.msg) }

// assertErrors checks that err holds exactly the wanted *Errors, in order,
// each positioned in file.
func assertErrors(t *testing.T, file string, err error, want []wantErr) {
	t.Helper()
	got := Errors(err)
	if len(want) == 0 {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	var gotStr []string
	for _, e := range got {
		gotStr = append(gotStr, e.Error())
	}
	require.Len(t, got, len(want), "got errors:\n%s\nwant:\n%v", strings.Join(gotStr, "\n"), want)
	for i, w := range want {
		e := got[i]
		assert.Equal(t, file, e.File, "error %d: %s", i, e)
		assert.Equal(t, w.line, e.Line, "error %d: %s (want %s)", i, e, w)
		assert.Equal(t, w.key, e.Key, "error %d: %s (want %s)", i, e, w)
		assert.Contains(t, e.Msg, w.msg, "error %d: %s (want %s)", i, e, w)
		assert.Positive(t, e.Col, "error %d: %s", i, e)
		// The printed form starts with file:line:col: key:
		prefix := fmt.Sprintf("%s:%d:%d: ", file, e.Line, e.Col)
		if w.key != "" {
			prefix += w.key + ": "
		}
		assert.True(t, strings.HasPrefix(e.Error(), prefix), "printed form %q", e.Error())
	}
}
