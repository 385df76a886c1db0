package simengine

import (
	"net"
	"net/http"
	"sync"
)

// unusedConns tracks the connections an http.Server has accepted that
// have not sent a request yet (http.StateNew). Shutdown waits for those
// until they are 5 s old (net/http's rule for new connections), so a
// client's pooled spare connection held a stopping engine past a 3 s stop
// grace until it was killed; closeAll ends them, as they carry nothing.
type unusedConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// track is an http.Server ConnState hook.
func (u *unusedConns) track(c net.Conn, st http.ConnState) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if st == http.StateNew {
		if u.conns == nil {
			u.conns = map[net.Conn]struct{}{}
		}
		u.conns[c] = struct{}{}
		return
	}
	delete(u.conns, c)
}

// closeAll closes the connections that have not sent a request.
func (u *unusedConns) closeAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for c := range u.conns {
		_ = c.Close()
	}
	clear(u.conns)
}
