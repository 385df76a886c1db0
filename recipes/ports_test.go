package recipes

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPortLayout pins the port layout other processes rely on: a router's
// engine one above it, its metrics 10000 above, the mooncake master 12000
// above (the plan goldens show them in argv).
func TestPortLayout(t *testing.T) {
	assert.Equal(t, 8889, EnginePortBehindRouter(8888))
	assert.Equal(t, 18888, RouterMetricsPort(8888))
	assert.Equal(t, 20888, MooncakeMasterPort(8888))
	assert.Equal(t, []int{8888, 8889, 18888}, RouterPorts(8888))
}
