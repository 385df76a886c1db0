package simengine

// prefixCache is a radix-like prefix cache over chained block hashes: a
// node stands for one block of blockTokens tokens and, through the chain,
// for the whole prefix before it. Nodes pinned by running requests cannot
// be evicted; the others are evicted least recently used first. Not safe
// for concurrent use (each rank owns one, under its lock).
type prefixCache struct {
	blockTokens int
	nodes       map[uint64]*cacheNode
	lru         cacheNode // sentinel of the list of unpinned nodes; next = oldest
	evictable   int       // tokens in unpinned nodes
	pinned      int       // tokens in pinned nodes
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

func newPrefixCache(blockTokens int) *prefixCache {
	c := &prefixCache{blockTokens: blockTokens, nodes: map[uint64]*cacheNode{}}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
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
	}
	return freed
}

// flush drops every unpinned node.
func (c *prefixCache) flush() { c.evict(c.evictable) }
