package recipes

import (
	"net"
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

// TestFreePorts: the free ports are in 10000-21999 (below Linux's
// ephemeral range), distinct, and can be bound.
func TestFreePorts(t *testing.T) {
	p, err := FreeRouterPort()
	if !assert.NoError(t, err) {
		return
	}
	assert.True(t, p >= 10000 && p < 22000, "%d", p)
	assert.True(t, portsFree(RouterPorts(p)...), "the router's three ports are free")
	ports, err := FreePorts(5)
	if !assert.NoError(t, err) {
		return
	}
	assert.Len(t, ports, 5)
	seen := map[int]bool{}
	for _, q := range ports {
		assert.True(t, q >= 10000 && q < 22000, "%d", q)
		assert.False(t, seen[q], "%d twice", q)
		seen[q] = true
	}
	assert.True(t, portsFree(ports...))
}

// TestPortsFreeSeesABoundPort: a port a listener holds is not free.
func TestPortsFreeSeesABoundPort(t *testing.T) {
	ln, err := net.Listen("tcp", ":0")
	if !assert.NoError(t, err) {
		return
	}
	defer ln.Close()
	assert.False(t, portsFree(ln.Addr().(*net.TCPAddr).Port))
}
