package recipes

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/internal/usage"
)

func TestFailure(t *testing.T) {
	rejected := &PlanError{Problems: []*Problem{{Point: "tp8 conc4", Role: "engine", Err: errors.New("bad flag")}}}
	err := Failure(rejected)
	assert.ErrorIs(t, err, rejected)
	assert.Contains(t, err.Error(), "plan rejected: ")

	err = Failure(fmt.Errorf("--site: %w", ErrInvalidOptions))
	_, isUsage := errors.AsType[*usage.Error](err)
	assert.True(t, isUsage, "invalid options are a usage error")
	assert.ErrorIs(t, err, ErrInvalidOptions)

	other := errors.New("disk full")
	assert.Same(t, other, Failure(other))
}
