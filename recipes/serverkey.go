package recipes

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
)

// ServerKey names the server a point runs against: points with the same
// key plan the identical server (engine argv and environment, sidecars,
// and the router in front of the engine, which is part of the server), so
// a sweep can start it once and run each point's load against it. The key
// is a hex sha256 of those commands and their health URLs; the client,
// eval and result settings do not enter it.
func ServerKey(p Point) string {
	h := sha256.New()
	str := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:]) // a hash.Hash never returns an error
		h.Write([]byte(s))
	}
	str("engine")
	hashCommand(str, &p.Engine)
	str(p.CommandFile)
	str(p.HealthURL)
	for _, s := range p.Sidecars {
		str("sidecar")
		str(s.Name)
		str(s.HealthURL)
		hashCommand(str, &s.Command)
	}
	if p.MultiNode != nil {
		for _, w := range p.MultiNode.Workers {
			str("worker")
			str(w.Name)
			str(w.HealthURL)
			hashCommand(str, &w.Command)
		}
	}
	if p.Router != nil {
		str("router")
		hashCommand(str, p.Router)
		str(p.RouterHealthURL)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func hashCommand(str func(string), c *Command) {
	list := func(tag string, xs []string) {
		str(tag)
		for _, x := range xs {
			str(x)
		}
	}
	kv := func(tag string, m map[string]string) {
		str(tag)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			str(k)
			str(m[k])
		}
	}
	list("argv", c.Argv)
	kv("env", c.Env)
	list("unset", c.Unset)
	kv("env_from", c.EnvFrom)
	list("placeholders", c.Placeholders)
}
