package cli

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/testkit/syncbuf"
)

// TestSignals: SIGHUP (an ssh disconnect) stops a command like SIGTERM; a
// second signal exits at once; a batch command exits at the first. The
// context's cause names the signal.
func TestSignals(t *testing.T) {
	wait := func(t *testing.T, ch <-chan int) int {
		t.Helper()
		select {
		case code := <-ch:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("no exit")
			return -1
		}
	}
	t.Run("first cancels, second exits", func(t *testing.T) {
		var errOut syncbuf.Buffer
		exits := make(chan int, 1)
		ctx, stop := HandleSignals(t.Context(), &errOut, func(code int) { exits <- code })
		defer stop()
		require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGHUP))
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("SIGHUP did not cancel the command")
		}
		cause := context.Cause(ctx)
		assert.ErrorIs(t, cause, context.Canceled, "a cancellation to every caller that asks errors.Is")
		assert.EqualError(t, cause, "interrupted by SIGHUP", "the cause names the signal")
		assert.Empty(t, exits, "the first signal only cancels")
		require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGINT))
		assert.Equal(t, ExitCancelled, wait(t, exits))
		assert.Contains(t, errOut.String(), "hangup: stopping (send it again to exit at once)")
		assert.Contains(t, errOut.String(), "again: exiting without waiting")
	})
	t.Run("batch command exits at the first", func(t *testing.T) {
		batchRunning.Store(true)
		defer batchRunning.Store(false)
		var errOut syncbuf.Buffer
		exits := make(chan int, 1)
		_, stop := HandleSignals(context.Background(), &errOut, func(code int) { exits <- code })
		defer stop()
		require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGTERM))
		assert.Equal(t, ExitCancelled, wait(t, exits))
	})
}
