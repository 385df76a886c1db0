package recipes

// The ports of a point on its public port P (PlanOptions.Port):
//
//	P        the engine, or the router in front of a DP-attention engine
//	P+1      the engine behind a router (Ctx.EnginePort)
//	P+10000  the router's Prometheus metrics
//	P+12000  the mooncake master of a KV cache offloaded to it
//
// Every command that binds one of them (recipes, the A/B gate's routers,
// the free-port search of sweep run) takes it from these functions.
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
