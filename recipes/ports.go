package recipes

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
)

// The ports of a point on its public port P (PlanOptions.Port):
//
//	P        the engine, or the router in front of a DP-attention engine
//	P+1      the engine behind a router (Ctx.EnginePort)
//	P+10000  the router's Prometheus metrics
//	P+12000  the mooncake master of a KV cache offloaded to it
//
// Every command that binds one of them (recipes, the A/B gate's routers,
// the free-port search of a simulated point: FreeRouterPort) takes it
// from these functions.
const (
	engineBehindRouterOffset = 1
	routerMetricsOffset      = 10000
	mooncakeMasterOffset     = 12000
)

// EnginePortBehindRouter is the engine's port when a router listens on p.
func EnginePortBehindRouter(p int) int { return p + engineBehindRouterOffset }

// RouterMetricsPort is the metrics port of a router listening on p.
func RouterMetricsPort(p int) int { return p + routerMetricsOffset }

// MooncakeMasterPort is the mooncake master's port of a point on p.
func MooncakeMasterPort(p int) int { return p + mooncakeMasterOffset }

// RouterPorts are the ports a point with a router on p binds on one host:
// p, the engine's and the router's metrics port.
func RouterPorts(p int) []int { return []int{p, EnginePortBehindRouter(p), RouterMetricsPort(p)} }

// FreeRouterPort finds a port p whose RouterPorts (p, p+1: the engine
// behind a DP-attention router, p+10000: the router's metrics) are free
// on this host. It draws from 10000-21999 so that none of the three falls
// in Linux's ephemeral range (32768+), where outgoing connections could
// take a port between this check and the server's bind.
func FreeRouterPort() (int, error) {
	for range 200 {
		port := 10000 + rand.IntN(12000)
		if portsFree(RouterPorts(port)...) {
			return port, nil
		}
	}
	return 0, errors.New("no free port triple (p, p+1, p+10000) with p in 10000-21999 on 127.0.0.1")
}

func portsFree(ports ...int) bool {
	var open []net.Listener
	defer func() {
		for _, ln := range open {
			ln.Close()
		}
	}()
	for _, p := range ports {
		ln, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			return false
		}
		open = append(open, ln)
	}
	return true
}

// FreePorts finds n distinct free ports in 10000-21999 (see
// FreeRouterPort), for the router and workers of a disaggregated point on
// one host.
func FreePorts(n int) ([]int, error) {
	for range 200 {
		seen := map[int]bool{}
		ports := make([]int, 0, n)
		for len(ports) < n {
			p := 10000 + rand.IntN(12000)
			if !seen[p] {
				seen[p] = true
				ports = append(ports, p)
			}
		}
		if portsFree(ports...) {
			return ports, nil
		}
	}
	return nil, fmt.Errorf("no %d free ports in 10000-21999 on 127.0.0.1", n)
}
