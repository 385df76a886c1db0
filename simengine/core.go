package simengine

import (
	"math"
	"math/rand/v2"
	"slices"
	"sweep/configs"
	"sync"
)

// delivery is what one step produced for one request.
type delivery struct {
	req    *simRequest
	tokens int
	done   bool
}

// rank is one scheduler (one DP rank): a waiting queue, a running batch, a
// KV pool with a prefix cache. Every method must be called with mu held.
type rank struct {
	idx  int
	cfg  *Config
	capa capacity
	acc  acceptor
	rng  *rand.Rand

	power *powerLog // busy time for the simulated GPU telemetry

	mu       sync.Mutex
	wake     chan struct{} // capacity 1, signalled on submit
	waiting  []*simRequest
	running  []*simRequest
	cache    *prefixCache
	private  int     // KV tokens held outside the cache by running requests
	now      float64 // simulated time at the end of the last step
	busy     bool    // the last step did work (continuous batching)
	st       stats
	noiseSig float64
	// onEnd, on the virtual clock, learns of requests the rank ended
	// without a delivery (aborted, or never fitting).
	onEnd func(q *simRequest, now float64, reason string)
}

func newRank(idx int, cfg *Config, capa capacity) *rank {
	block := max(cfg.PageSize, 64)
	block = (block + cfg.PageSize - 1) / cfg.PageSize * cfg.PageSize
	r := &rank{
		idx:      idx,
		cfg:      cfg,
		capa:     capa,
		acc:      newAcceptor(cfg.Spec),
		wake:     make(chan struct{}, 1),
		cache:    newPrefixCache(block, capa.hostTokens),
		noiseSig: 0.03,
		power:    newPowerLog(),
	}
	r.cache.keepOnLoad = cfg.HostKV.WriteBack
	r.st.init(cfg)
	r.restartStream()
	return r
}

// restartStream restarts the rank's random stream (step noise, draft
// acceptance) from its seed, as a new server's: the server does so when
// it turns ready and at every cache flush, so that a point's numbers do
// not depend on what the server ran before it (a sweep flushes the
// caches between the points that share a server, so that each starts as
// on a fresh server).
func (r *rank) restartStream() {
	r.rng = rand.New(rand.NewPCG(r.cfg.Seed, uint64(r.idx)+0x9e3779b97f4a7c15))
}

// used is the KV tokens held by running requests (private + pinned
// cache); evictable cached tokens are not counted, as in both engines'
// usage gauges.
func (r *rank) used() int { return r.private + r.cache.pinned }

// free is the KV tokens neither used nor cached.
func (r *rank) free() int { return r.capa.poolTokens - r.used() - r.cache.evictable }

// enqueue adds a request at simulated time now.
func (r *rank) enqueue(q *simRequest, now float64) {
	q.arrival, q.admitted, q.firstToken, q.lastToken = now, -1, -1, -1
	q.prefillTo = q.prompt
	r.waiting = append(r.waiting, q)
}

// idle reports whether the rank has nothing to do.
func (r *rank) idle() bool { return len(r.waiting) == 0 && len(r.running) == 0 }

// ensure makes room for need tokens, evicting cached prefixes if that is
// enough; it evicts nothing when it cannot succeed.
func (r *rank) ensure(need int) bool {
	if r.free() >= need {
		return true
	}
	if r.free()+r.cache.evictable < need {
		return false
	}
	r.cache.evict(need - r.free())
	return r.free() >= need
}

// admit moves waiting requests into the batch while slots and KV allow.
func (r *rank) admit(start float64) {
	reserve := 0
	if r.cfg.Engine == configs.SGLang { // SGLang keeps room for running requests' next tokens
		for _, q := range r.running {
			reserve += min(q.target-q.generated, 512) * 3 / 10
		}
	}
	for len(r.waiting) > 0 && len(r.running) < r.capa.maxRunning {
		q := r.waiting[0]
		var nodes []*cacheNode
		if !r.cfg.NoPrefixCache {
			nodes = r.cache.match(q.blocks)
			// At least one token is always computed (it yields the logits).
			for len(nodes) > 0 && len(nodes)*r.cache.blockTokens >= q.prefillTo {
				r.cache.release(nodes[len(nodes)-1:])
				nodes = nodes[:len(nodes)-1]
			}
		}
		hit := len(nodes) * r.cache.blockTokens
		// Blocks the host tier holds after the device's prefix are loaded,
		// not computed; they need device room all the same.
		onHost := 0
		if r.cache.hostCap > 0 && !r.cfg.NoPrefixCache {
			rest := q.blocks[len(nodes):]
			onHost = min(r.cache.touchHost(rest), (q.prefillTo-1)/r.cache.blockTokens-len(nodes))
		}
		need := q.prefillTo - hit + min(q.target-q.generated, 128) + reserve
		if !r.ensure(need) {
			r.cache.release(nodes)
			if len(r.running) == 0 && r.free()+r.cache.evictable < need {
				// It can never fit: fail it rather than block the queue.
				r.waiting = r.waiting[1:]
				r.abort(q, start, "length")
				continue
			}
			return
		}
		r.waiting = r.waiting[1:]
		q.nodes, q.computed, q.inserted = nodes, hit, false
		q.private = q.prefillTo - hit
		r.private += q.private
		loaded := 0
		if onHost > 0 {
			// touchHost made them the tier's newest, so the evictions of
			// ensure drop other blocks first.
			loaded = r.cache.load(q.blocks[len(nodes):len(nodes)+onHost]) * r.cache.blockTokens
			q.computed += loaded
			q.loading += float64(loaded) * r.capa.perLoadToken
			hit += loaded
		}
		if q.transferred && q.admitted < 0 {
			q.computed = q.prefillTo
			r.insertPrompt(q)
		}
		if q.admitted < 0 {
			q.admitted, q.cached, q.fromHost = start, hit, loaded
			if q.logged {
				r.st.onAdmit(r.cfg, q, start)
			}
		}
		r.running = append(r.running, q)
		reserve += min(q.target-q.generated, 512) * 3 / 10
	}
}

// release returns a request's KV (cached blocks become evictable).
func (r *rank) release(q *simRequest) {
	r.cache.release(q.nodes)
	q.nodes = nil
	r.private -= q.private
	q.private = 0
}

// abort ends a request that can no longer run.
func (r *rank) abort(q *simRequest, now float64, reason string) {
	r.release(q)
	if q.sink != nil {
		q.sink.pushAt(0, true, reason, q.cached, now)
	}
	if r.onEnd != nil {
		r.onEnd(q, now, reason)
	}
	if q.logged {
		r.st.onAbort(r.cfg, q, now)
	}
}

// dropAborted removes requests whose client went away.
func (r *rank) dropAborted(now float64) {
	keep := func(list []*simRequest) []*simRequest {
		return slices.DeleteFunc(list, func(q *simRequest) bool {
			if !q.aborted.Load() {
				return false
			}
			r.abort(q, now, "abort")
			return true
		})
	}
	r.waiting = keep(r.waiting)
	r.running = keep(r.running)
}

// step runs one scheduler iteration starting at simulated time start and
// returns its duration and the tokens it produced. The effects are
// applied immediately with end-of-step timestamps; the caller delivers
// them once the (scaled) duration has passed. A zero duration means there
// was nothing to run.
func (r *rank) step(start float64) (float64, []delivery) {
	r.dropAborted(start)
	r.admit(start)
	if len(r.running) == 0 {
		r.busy = false
		r.st.setLive(r)
		return 0, nil
	}

	// Form the batch.
	var decoders, prefills []*simRequest
	for _, q := range r.running {
		if q.computed < q.prefillTo {
			prefills = append(prefills, q)
		} else {
			decoders = append(decoders, q)
		}
	}
	budget := r.cfg.ChunkSize
	mixed := r.cfg.Engine == configs.VLLM
	if !mixed && len(prefills) > 0 {
		decoders = nil // SGLang runs a prefill (extend) batch before decoding
	}
	perDecode := 1
	if r.acc.on() {
		perDecode = r.cfg.Spec.NumDraftTokens
	}
	if mixed {
		budget -= len(decoders) * perDecode
	}
	type chunk struct {
		q *simRequest
		n int
	}
	var chunks []chunk
	for _, q := range prefills {
		if budget <= 0 {
			break
		}
		n := min(q.prefillTo-q.computed, budget)
		chunks = append(chunks, chunk{q, n})
		budget -= n
	}

	// Cost.
	ctx := 0
	for _, q := range decoders {
		ctx += q.prompt + q.generated
	}
	dur := r.capa.decodeTime(len(decoders), ctx)
	prefillTokens, cachedTokens := 0, 0
	if len(chunks) > 0 {
		if len(decoders) == 0 {
			dur += r.capa.fixedStep
		}
		for _, c := range chunks {
			mid := float64(c.q.computed) + float64(c.n)/2
			dur += float64(c.n)*r.capa.perPrefill*(1+mid*r.capa.perPrefillCtx) + c.q.loading
			c.q.loading = 0
			prefillTokens += c.n
			if c.q.computed == c.q.cached && c.q.generated == 0 {
				cachedTokens += c.q.cached
			}
		}
	}
	dur *= math.Exp(r.noiseSig*r.rng.NormFloat64() - r.noiseSig*r.noiseSig/2)
	if f, ok := r.cfg.HasFault(FaultSlowSteps); ok {
		dur *= 1 + f.Percent/100
	}
	end := start + dur
	if decodeTokens := len(decoders) * perDecode; prefillTokens+decodeTokens > 0 {
		r.power.add(start, end, float64(prefillTokens)/float64(prefillTokens+decodeTokens), len(decoders))
	}

	// Effects.
	var out []delivery
	for _, c := range chunks {
		q := c.q
		q.computed += c.n
		if q.computed < q.prefillTo {
			continue
		}
		r.insertPrompt(q)
		// The forward that completes the prefill yields one token.
		n := 1
		q.generated++
		q.private++
		r.private++
		if q.firstToken < 0 {
			q.firstToken = end
		}
		d := delivery{req: q, tokens: n, done: q.generated >= q.target}
		if q.logged {
			r.st.onTokens(r.cfg, q, n, 0, false, end)
		}
		q.lastToken = end
		out = append(out, d)
	}
	if len(chunks) > 0 {
		r.st.onPrefillBatch(r.cfg, prefillTokens, cachedTokens, dur)
	}
	accTotal := 0
	var stepAccepted int
	var shared bool
	if r.acc.on() && len(decoders) > 0 {
		stepAccepted, shared = r.acc.batch(r.rng)
	}
	for _, q := range decoders {
		n, accepted := 1, 0
		if r.acc.on() {
			accepted = stepAccepted
			if !shared {
				accepted = r.acc.draw(r.rng)
			}
			n = accepted + 1
			accTotal += accepted
		}
		n = min(n, q.target-q.generated)
		q.generated += n
		q.verifies++
		q.private += n
		r.private += n
		if q.firstToken < 0 { // a transferred prompt's first token
			q.firstToken = end
		}
		if q.logged {
			r.st.onTokens(r.cfg, q, n, accepted, r.acc.on(), end)
		}
		q.lastToken = end
		out = append(out, delivery{req: q, tokens: n, done: q.generated >= q.target})
	}
	if len(decoders) > 0 {
		r.st.onDecodeBatch(r.cfg, len(decoders), accTotal, dur)
	}

	// Finish.
	for _, d := range out {
		if d.done {
			r.release(d.req)
			if d.req.logged {
				r.st.onFinish(r.cfg, d.req, end)
			}
		}
	}
	r.running = slices.DeleteFunc(r.running, func(q *simRequest) bool { return q.generated >= q.target })
	r.relieve(end)
	r.busy = true
	r.st.setLive(r)
	return dur, out
}

// insertPrompt caches the prompt's full blocks once its prefill is done;
// blocks another request inserted meanwhile are shared, freeing memory.
func (r *rank) insertPrompt(q *simRequest) {
	if r.cfg.NoPrefixCache || q.inserted {
		return
	}
	q.inserted = true
	for _, h := range q.blocks[len(q.nodes):] {
		n, _ := r.cache.insert(h)
		q.nodes = append(q.nodes, n)
		q.private -= r.cache.blockTokens
		r.private -= r.cache.blockTokens
	}
}

// relieve handles a KV pool overrun after decoding grew the batch: evict
// cached prefixes, then retract the newest requests (they return to the
// front of the queue and recompute their context later).
func (r *rank) relieve(now float64) {
	over := r.used() + r.cache.evictable - r.capa.poolTokens
	if over <= 0 {
		return
	}
	r.cache.evict(over)
	for r.used() > r.capa.poolTokens && len(r.running) > 1 {
		q := r.running[len(r.running)-1]
		r.running = r.running[:len(r.running)-1]
		r.release(q)
		q.prefillTo, q.computed, q.inserted = q.prompt+q.generated, 0, false
		r.waiting = slices.Insert(r.waiting, 0, q)
		r.st.onRetract(r.cfg, q)
	}
	if r.used() > r.capa.poolTokens && len(r.running) == 1 {
		q := r.running[0]
		r.running = r.running[:0]
		r.abort(q, now, "length")
	}
}

func (s *stats) setLive(r *rank) {
	s.running, s.waiting = len(r.running), len(r.waiting)
	s.used, s.evictable, s.pool = r.used(), r.cache.evictable, r.capa.poolTokens
	s.available = max(r.free(), 0)
	s.decodeSumSeqLens = 0
	for _, q := range r.running {
		s.decodeSumSeqLens += q.prompt + q.generated
	}
}
