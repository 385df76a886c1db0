package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sweep/recipes"
)

// freePortPair finds a port p such that p, p+1 (the engine behind a
// DP-attention router) and p+10000 (the router's metrics) are free. It
// draws from 10000-21999 so that none of the three falls in Linux's
// ephemeral range (32768+), where outgoing connections could take a port
// between this check and the server's bind.
func freePortPair() (int, error) {
	for range 200 {
		port := 10000 + rand.IntN(12000)
		if portsFree(recipes.RouterPorts(port)...) {
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

// freePorts finds n distinct free ports in 10000-21999 (see freePortPair),
// for the router and workers of a disaggregated point on one host.
func freePorts(n int) ([]int, error) {
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
