package simengine

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"sweep/internal/simproto"
	"sweep/recipes/schema"
)

// lmcacheConnector is vLLM's LMCache multi-process connector: its
// workers keep their KV in LMCache servers, separate processes that hold
// the host tier's size (--l1-size-gb), not in the engine.
const lmcacheConnector = "LMCacheMPConnector"

// lmcacheExtra is what the simulated engine reads of the connector's
// kv_connector_extra_config: the servers it connects to.
type lmcacheExtra struct {
	// ServerURLs is lmcache.mp.server_urls: a comma-separated string or a
	// list; it wins over Host and Port.
	ServerURLs json.RawMessage `json:"lmcache.mp.server_urls"`
	// Host and Port are the one server of lmcache.mp.host (default
	// tcp://localhost) and lmcache.mp.port (default 5555).
	Host *string         `json:"lmcache.mp.host"`
	Port json.RawMessage `json:"lmcache.mp.port"`
}

// urls returns the connector's server URLs as vLLM's LMCacheMPConnector
// resolves them: server_urls when given, else host:port; a URL without a
// scheme takes tcp://.
func (x lmcacheExtra) urls() ([]string, error) {
	var out []string
	if len(x.ServerURLs) > 0 && string(x.ServerURLs) != "null" {
		var list []string
		var joined string
		switch {
		case json.Unmarshal(x.ServerURLs, &joined) == nil:
			list = strings.Split(joined, ",")
		case json.Unmarshal(x.ServerURLs, &list) == nil:
		default:
			return nil, fmt.Errorf("lmcache.mp.server_urls %s: want a comma-separated string or a list of URLs", x.ServerURLs)
		}
		for _, u := range list {
			if u = strings.TrimSpace(u); u != "" {
				out = append(out, u)
			}
		}
	}
	if len(out) == 0 {
		host, port := "tcp://localhost", "5555"
		if x.Host != nil {
			host = *x.Host
		}
		if len(x.Port) > 0 {
			var n json.Number
			if err := json.Unmarshal(x.Port, &n); err != nil {
				var s string
				if err := json.Unmarshal(x.Port, &s); err != nil {
					return nil, fmt.Errorf("lmcache.mp.port %s: want a port number", x.Port)
				}
				n = json.Number(s)
			}
			port = n.String()
		}
		out = []string{host + ":" + port}
	}
	for i, u := range out {
		if !strings.Contains(u, "://") {
			out[i] = "tcp://" + u
		}
	}
	return out, nil
}

// urlPort is the port of a connector URL.
func urlPort(raw string) (int, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return 0, fmt.Errorf("server URL %q: %w", raw, err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("server URL %q: want scheme://host:port with a port in [1, 65535]", raw)
	}
	return port, nil
}

// lmcacheServer is one `lmcache server` among a point's sidecars.
type lmcacheServer struct {
	argv []string
	// l1Bytes is its L1 pool: --l1-size-gb GB of 2^30 bytes, as LMCache
	// sizes it.
	l1Bytes float64
}

// lmcacheServers reads the `lmcache server` commands among the sidecars'
// argvs (simproto.EnvSidecars' value) with LMCache's flag schema
// (recipes/schema, lmcache), by the port each listens on. Other programs
// and other lmcache subcommands are not servers and are skipped. A
// command the schema rejects, one whose eviction policy the simulated
// tier does not model (it evicts the least recently used block), or two
// servers on one port are errors.
func lmcacheServers(sidecars string) (map[int]lmcacheServer, error) {
	argvs, err := simproto.ParseSidecars(sidecars)
	if err != nil {
		return nil, err
	}
	s, err := schema.Load("lmcache", "")
	if err != nil {
		return nil, fmt.Errorf("flag schema lmcache: %w", err)
	}
	out := map[int]lmcacheServer{}
	for _, argv := range argvs {
		rest := s.TrimProgram(argv)
		if len(rest) == len(argv) || len(rest) < len(s.Command) || !slices.Equal(rest[:len(s.Command)], s.Command) {
			continue
		}
		cmd := strings.Join(argv, " ")
		p, err := s.Parse(rest)
		if err != nil && !s.Complete {
			return nil, fmt.Errorf("%s %q: %w\n(%s lists only the flags sweep's recipes pass: add a flag the server takes to recipes/schema/data/%s.yaml)", simproto.EnvSidecars, cmd, err, s.ID(), s.ID())
		}
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", simproto.EnvSidecars, cmd, err)
		}
		if policy, _ := p.String("--eviction-policy"); policy != "LRU" {
			return nil, fmt.Errorf("%s %q: --eviction-policy %s: the simulated tier evicts the least recently used block: want LRU", simproto.EnvSidecars, cmd, policy)
		}
		gb, _ := p.Float("--l1-size-gb")
		if !(gb > 0) || math.IsInf(gb, 0) {
			return nil, fmt.Errorf("%s %q: --l1-size-gb %g: want a positive size in GB", simproto.EnvSidecars, cmd, gb)
		}
		port64, _ := p.Int("--port")
		port := int(port64)
		if other, ok := out[port]; ok {
			return nil, fmt.Errorf("%s: %q and %q both listen on port %d: the second would fail to bind", simproto.EnvSidecars, strings.Join(other.argv, " "), cmd, port)
		}
		out[port] = lmcacheServer{argv: argv, l1Bytes: gb * (1 << 30)}
	}
	return out, nil
}

// lmcacheTier sizes the host tier of an engine of world workers (TP ×
// PP) that keeps its KV through vLLM's LMCacheMPConnector: the
// connector's extra config names the servers (lmcacheExtra.urls), sidecars
// (simproto.EnvSidecars) their commands. As the connector does, the
// workers split into len(urls) contiguous groups (world must divide
// evenly), each on one server, so each worker gets its server's L1 over
// the group's size; the smallest share bounds what the workers hold
// together (a block is a hit only where every worker has its shard), so
// it is the tier's (perWorker, HostKV.BytesPerWorker); source names the
// servers and their L1 (HostKV.Source). A URL no server listens on fails
// the engine's start, as the real connector fails to connect.
func lmcacheTier(extra json.RawMessage, sidecars string, world int) (perWorker float64, source string, err error) {
	var x lmcacheExtra
	if len(extra) > 0 {
		if err := json.Unmarshal(extra, &x); err != nil {
			return 0, "", fmt.Errorf("kv_connector_extra_config: %w", err)
		}
	}
	urls, err := x.urls()
	if err != nil {
		return 0, "", err
	}
	if world%len(urls) != 0 {
		return 0, "", fmt.Errorf("%d LMCache servers for %d workers (TP × PP): the connector needs the workers to divide evenly over its servers", len(urls), world)
	}
	servers, err := lmcacheServers(sidecars)
	if err != nil {
		return 0, "", err
	}
	perServer := float64(world / len(urls))
	least := math.Inf(1)
	var sizes []string
	for _, u := range urls {
		port, err := urlPort(u)
		if err != nil {
			return 0, "", err
		}
		srv, ok := servers[port]
		if !ok {
			return 0, "", fmt.Errorf("no LMCache server for %s: the real engine would fail to connect; start `lmcache server --port %d --l1-size-gb GB --eviction-policy LRU` beside it (a simulated run reads the point's sidecars from %s, which sweep run sets from the plan; %d lmcache servers there)",
				u, port, simproto.EnvSidecars, len(servers))
		}
		least = min(least, srv.l1Bytes/perServer)
		if size := fmt.Sprintf("%g GiB", srv.l1Bytes/(1<<30)); !slices.Contains(sizes, size) {
			sizes = append(sizes, size)
		}
	}
	servs := fmt.Sprintf("%d servers", len(urls))
	if len(urls) == 1 {
		servs = "1 server"
	}
	workers := fmt.Sprintf("%g workers", perServer)
	if perServer == 1 {
		workers = "1 worker"
	}
	return least, fmt.Sprintf("LMCache: %s × %s L1 (%s a server), LRU", servs, strings.Join(sizes, " or "), workers), nil
}
