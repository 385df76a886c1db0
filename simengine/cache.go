package simengine

// prefixCache is a radix-like prefix cache over chained block hashes: a
// node stands for one block of blockTokens tokens and, through the chain,
// for the whole prefix before it. Nodes pinned by running requests cannot
// be evicted; the others are evicted least recently used first. With a
// host tier (hostCap > 0) an evicted block moves to host memory, which
// drops its own least recently used blocks beyond hostCap tokens; a prompt
// whose prefix continues there loads those blocks instead of computing
// them. Not safe for concurrent use (each rank owns one, under its lock).
type prefixCache struct {
	blockTokens int
	nodes       map[uint64]*cacheNode
	lru         cacheNode // sentinel of the list of unpinned nodes; next = oldest
	evictable   int       // tokens in unpinned nodes
	pinned      int       // tokens in pinned nodes

	hostCap int // tokens the host tier holds beyond the device's
	// keepOnLoad keeps a loaded block's host copy (a write-back tier:
	// the copy is the tier's newest, and the block is not written again
	// when the device evicts it while the copy lasts).
	keepOnLoad bool
	host       map[uint64]*cacheNode // blocks in the host tier only
	hostLRU    cacheNode             // sentinel; next = oldest
	hostUsed   int                   // tokens in the host tier
}

type cacheNode struct {
	hash       uint64
	refs       int
	prev, next *cacheNode // in the LRU list while refs == 0
	// after is the node last matched after this one: the next block of a
	// session's prompt is usually it, found without a map lookup. gone
	// marks an evicted node (its hash may have a new node since).
	after *cacheNode
	gone  bool
}

func newPrefixCache(blockTokens, hostCap int) *prefixCache {
	c := &prefixCache{blockTokens: blockTokens, nodes: map[uint64]*cacheNode{}, hostCap: hostCap}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	c.hostLRU.prev, c.hostLRU.next = &c.hostLRU, &c.hostLRU
	if hostCap > 0 {
		c.host = map[uint64]*cacheNode{}
	}
	return c
}

// match pins the longest cached prefix of blocks and returns its nodes.
func (c *prefixCache) match(blocks []uint64) []*cacheNode {
	var out []*cacheNode
	var prev *cacheNode
	for _, h := range blocks {
		n := (*cacheNode)(nil)
		if prev != nil && prev.after != nil && prev.after.hash == h && !prev.after.gone {
			n = prev.after // the node c.nodes[h]: a hash has one node until it is evicted
		} else {
			var ok bool
			if n, ok = c.nodes[h]; !ok {
				break
			}
			if prev != nil {
				prev.after = n
			}
		}
		if out == nil {
			out = make([]*cacheNode, 0, len(blocks))
		}
		out = append(out, n)
		prev = n
	}
	// Pin leaf-first so that, when unpinned together later, parents are
	// more recent than children and leaves are evicted first.
	for i := len(out) - 1; i >= 0; i-- {
		c.pin(out[i])
	}
	return out
}

// insert adds (or finds) the node for h and pins it. It reports whether
// the node is new.
func (c *prefixCache) insert(h uint64) (*cacheNode, bool) {
	if n, ok := c.nodes[h]; ok {
		c.pin(n)
		return n, false
	}
	n := &cacheNode{hash: h, refs: 1}
	c.nodes[h] = n
	c.pinned += c.blockTokens
	return n, true
}

func (c *prefixCache) pin(n *cacheNode) {
	if n.refs == 0 {
		n.prev.next, n.next.prev = n.next, n.prev
		n.prev, n.next = nil, nil
		c.evictable -= c.blockTokens
		c.pinned += c.blockTokens
	}
	n.refs++
}

// release unpins nodes, deepest first, making them evictable.
func (c *prefixCache) release(nodes []*cacheNode) {
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		n.refs--
		if n.refs == 0 {
			// append at the most recent end
			n.prev, n.next = c.lru.prev, &c.lru
			c.lru.prev.next = n
			c.lru.prev = n
			c.evictable += c.blockTokens
			c.pinned -= c.blockTokens
		}
	}
}

// evict frees at least tokens tokens of unpinned nodes, oldest first, and
// returns how many it freed.
func (c *prefixCache) evict(tokens int) int {
	freed := 0
	for freed < tokens && c.lru.next != &c.lru {
		n := c.lru.next
		c.lru.next, n.next.prev = n.next, &c.lru
		delete(c.nodes, n.hash)
		n.gone, n.after = true, nil
		c.evictable -= c.blockTokens
		freed += c.blockTokens
		c.toHost(n.hash)
	}
	return freed
}

// toHost keeps an evicted block in the host tier, dropping the tier's
// oldest blocks beyond its capacity.
func (c *prefixCache) toHost(h uint64) {
	if c.hostCap < c.blockTokens {
		return
	}
	if _, ok := c.host[h]; ok {
		return
	}
	n := &cacheNode{hash: h, prev: c.hostLRU.prev, next: &c.hostLRU}
	c.hostLRU.prev.next = n
	c.hostLRU.prev = n
	c.host[h] = n
	c.hostUsed += c.blockTokens
	for c.hostUsed > c.hostCap {
		c.dropHost(c.hostLRU.next)
	}
}

func (c *prefixCache) dropHost(n *cacheNode) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
	delete(c.host, n.hash)
	c.hostUsed -= c.blockTokens
}

// onHost is how many of blocks, from the first, the host tier holds.
func (c *prefixCache) onHost(blocks []uint64) int {
	k := 0
	for k < len(blocks) && c.host[blocks[k]] != nil {
		k++
	}
	return k
}

// touchHost is onHost that also marks the run as just used, deepest block
// first (so a later drop takes a prefix's tail before its head), as
// SGLang's prefix match stamps the host nodes it walks: blocks a waiting
// prompt is about to load are the newest in the tier, not the oldest.
func (c *prefixCache) touchHost(blocks []uint64) int {
	k := c.onHost(blocks)
	for i := k - 1; i >= 0; i-- {
		n := c.host[blocks[i]]
		n.prev.next, n.next.prev = n.next, n.prev
		n.prev, n.next = c.hostLRU.prev, &c.hostLRU
		c.hostLRU.prev.next = n
		c.hostLRU.prev = n
	}
	return k
}

// load takes the host tier's run of blocks from the first (they return
// to the device pool as the prompt's own until its prefill inserts them)
// and returns how many it took.
func (c *prefixCache) load(blocks []uint64) int {
	if c.keepOnLoad {
		return c.touchHost(blocks)
	}
	k := c.onHost(blocks)
	for _, h := range blocks[:k] {
		c.dropHost(c.host[h])
	}
	return k
}

// flush drops every unpinned node and the host tier.
func (c *prefixCache) flush() {
	c.evict(c.evictable)
	for c.hostLRU.next != &c.hostLRU {
		c.dropHost(c.hostLRU.next)
	}
}
