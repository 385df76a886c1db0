package run

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseROCmMemUse(t *testing.T) {
	out := []byte(`{"card0": {"GPU Memory Allocated (VRAM%)": "3"}, "card1": {"GPU Memory Allocated (VRAM%)": "87"}, "system": {"x": "y"}}`)
	u, err := parseROCmMemUse(out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []float64{3, 87}, u)
	_, err = parseROCmMemUse([]byte(`{"card0": {"Temperature": "40"}}`))
	assert.Error(t, err)
}

func TestParseNvidiaMemUse(t *testing.T) {
	u, err := parseNvidiaMemUse([]byte("1024, 81920\n40960, 81920\n"))
	require.NoError(t, err)
	assert.Equal(t, []float64{1.25, 50}, u)
	_, err = parseNvidiaMemUse([]byte("N/A\n"))
	assert.Error(t, err)
}

func TestWaitGPUsIdle(t *testing.T) {
	t.Run("no tool", func(t *testing.T) {
		checked, err := WaitGPUsIdle(t.Context(), func(context.Context) ([]float64, bool, error) { return nil, false, nil }, GPUIdleOptions{})
		assert.False(t, checked)
		assert.NoError(t, err)
	})
	t.Run("drains after three polls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			polls := 0
			start := time.Now()
			probe := func(context.Context) ([]float64, bool, error) {
				polls++
				if polls < 3 {
					return []float64{2, 95}, true, nil
				}
				return []float64{2, 4}, true, nil
			}
			checked, err := WaitGPUsIdle(t.Context(), probe, GPUIdleOptions{})
			assert.True(t, checked)
			assert.NoError(t, err)
			assert.Equal(t, 3, polls)
			assert.Equal(t, 20*time.Second, time.Since(start), "two waits of the default 10 s interval")
		})
	})
	t.Run("stays busy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			probe := func(context.Context) ([]float64, bool, error) { return []float64{50}, true, nil }
			_, err := WaitGPUsIdle(t.Context(), probe, GPUIdleOptions{Polls: 4})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "still busy after 4 polls")
		})
	})
	t.Run("probe error", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := WaitGPUsIdle(t.Context(), func(context.Context) ([]float64, bool, error) { return nil, true, boom }, GPUIdleOptions{})
		assert.ErrorIs(t, err, boom)
	})
}
