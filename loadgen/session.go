package loadgen

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// message is one chat message sent to the server.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// session is one play of a conversation on a lane: the growing chat
// history (so every turn's prompt extends the previous one and the
// engine's prefix cache is hit), the cache-bust marker of this play and
// the KV blocks already sent (for theoretical_prefix_cache_hit).
type session struct {
	conv          *Conversation
	num           int    // session_num: play ordinal across the run
	marker        string // cache-bust marker, "" when disabled
	correlationID string
	rootID        string // root_correlation_id (tree id)
	parentID      string // parent_correlation_id, "" for roots
	next          int    // index of the next turn to send
	messages      []message
	tokens        int // words in messages (one word is one synthetic token)
	seen          map[int64]struct{}
	lastHashes    []int64 // the hash ids of the last completed turn (all in seen)

	// On the virtual clock the prompt goes by block ids, not text: p is
	// the participant playing the session, ids the content id of every
	// full block of simBlockTokens tokens (little-endian uint64s), cur the
	// running hash of the partial block of curN tokens.
	p    *vpart
	sim  bool
	ids  []byte
	cur  uint64
	curN int
	// kept is how many leading ids the engine keeps for the session (the
	// last prompt it resolved): the next prompt sends only those after.
	kept int
	// failed: a request of the play failed (branch_stats' errored child).
	failed bool
}

// synthetic text: every token is one lower-case word derived from
// (namespace, block id, position), so equal hash ids give equal text and
// an engine that counts whitespace-separated words sees the trace's
// token counts. A real tokenizer gives a different count; ISL/OSL then
// come from the server (--use-server-token-count).
func word(sb *strings.Builder, ns string, block int64, pos int) {
	v := tokenHash(ns, block, pos)
	const letters = "abcdefghijklmnopqrstuvwxyz"
	n := 3 + int(v%5)
	v /= 5
	for range n {
		sb.WriteByte(letters[v%26])
		v /= 26
	}
}

// tokenHash is FNV-1a over ns, block and pos: the identity of one
// synthetic token (no allocation: this runs once per prompt token).
func tokenHash(ns string, block int64, pos int) uint64 {
	const prime = 1099511628211
	v := uint64(14695981039346656037)
	for i := 0; i < len(ns); i++ {
		v = (v ^ uint64(ns[i])) * prime
	}
	for _, x := range [2]uint64{uint64(block), uint64(pos)} {
		for range 8 {
			v = (v ^ (x & 0xff)) * prime
			x >>= 8
		}
	}
	return v
}

// addToken folds one token into the block ids (virtual clock).
func (s *session) addToken(v uint64) {
	s.cur = (s.cur^v)*1099511628211 + 0x9e3779b97f4a7c15
	s.curN++
	if s.curN == simBlockTokens {
		s.ids = binary.LittleEndian.AppendUint64(s.ids, s.cur)
		s.cur, s.curN = 0, 0
	}
}

// addTokens is appendWords for the block ids. A token's identity is a
// mix of its namespace's hash, its block and its position (the same
// equalities as the words of appendWords, at a few ns per token).
func (s *session) addTokens(ns string, blockSize int, hashIDs []int64, from, n int, unique string) {
	nsH, unH := strHash(ns), strHash(unique)
	for p := from; p < from+n; p++ {
		b := p / blockSize
		if b < len(hashIDs) {
			s.addToken(mix64(nsH ^ uint64(hashIDs[b])*0x9e3779b97f4a7c15 ^ uint64(p%blockSize)<<48))
		} else {
			s.addToken(mix64(unH ^ uint64(b)*0x9e3779b97f4a7c15 ^ uint64(p%blockSize)<<48))
		}
	}
}

// strHash is FNV-1a of s.
func strHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// mix64 is splitmix64's finaliser: a bijective scramble of x.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// appendWords writes n words for token positions [from, from+n) of a turn
// whose input blocks are hashIDs; positions past the last block use
// turn-unique filler (the part of the prompt no earlier request shares).
func appendWords(sb *strings.Builder, ns string, blockSize int, hashIDs []int64, from, n int, unique string) {
	for p := from; p < from+n; p++ {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		b := p / blockSize
		if b < len(hashIDs) {
			word(sb, ns, hashIDs[b], p%blockSize)
		} else {
			word(sb, unique, int64(b), p%blockSize)
		}
	}
}

// prepare appends the user message of turn i to the history and returns
// the messages to send. The prompt is the whole conversation so far plus
// the new input, sized so it holds turn.In tokens. When the recorded
// input is shorter than the history (context compaction), the history is
// reset and the turn is sent as one fresh message.
func (s *session) prepare(i int) []message {
	t := s.conv.Turns[i]
	if s.sim {
		if t.In < s.tokens {
			s.tokens, s.ids, s.cur, s.curN, s.kept = 0, s.ids[:0], 0, 0, 0
		}
		n := max(1, t.In-s.tokens)
		if s.tokens == 0 && s.marker != "" {
			s.addToken(tokenHash(s.marker, 0, 0))
			s.tokens++
			n = max(1, n-1)
		}
		s.addTokens(s.conv.TraceID, s.conv.BlockSize, t.HashIDs, s.tokens, n, fmt.Sprintf("%s#%d", s.conv.ID, i))
		s.tokens += n
		return nil
	}
	if t.In < s.tokens {
		s.messages, s.tokens = nil, 0
	}
	n := max(1, t.In-s.tokens)
	var sb strings.Builder
	if len(s.messages) == 0 && s.marker != "" {
		sb.WriteString(s.marker)
		n = max(1, n-1)
	}
	appendWords(&sb, s.conv.TraceID, s.conv.BlockSize, t.HashIDs, s.tokens, n, fmt.Sprintf("%s#%d", s.conv.ID, i))
	s.messages = append(s.messages, message{Role: "user", Content: sb.String()})
	s.tokens += n
	if s.marker != "" && len(s.messages) == 1 {
		s.tokens++
	}
	return s.messages
}

// complete replays turn i's recorded assistant response into the history
// (the live response is not used, as with
// AIPERF_DATASET_WEKA_LIVE_ASSISTANT_RESPONSES=0) and returns the
// turn's (blocks, blocks already seen in this play).
func (s *session) complete(i int) (blocks, hits int) {
	t := s.conv.Turns[i]
	if t.Out > 0 && s.sim {
		s.addTokens(s.conv.ID+"/assistant", s.conv.BlockSize, nil, 0, t.Out, fmt.Sprintf("%s@%d", s.conv.ID, i))
		s.tokens += t.Out
	} else if t.Out > 0 {
		var sb strings.Builder
		appendWords(&sb, s.conv.ID+"/assistant", s.conv.BlockSize, nil, 0, t.Out, fmt.Sprintf("%s@%d", s.conv.ID, i))
		s.messages = append(s.messages, message{Role: "assistant", Content: sb.String()})
		s.tokens += t.Out
	}
	if s.seen == nil {
		s.seen = map[int64]struct{}{}
	}
	// A turn's blocks usually start with the last turn's, which are all
	// seen: count those as hits without looking each up.
	k := 0
	for k < len(t.HashIDs) && k < len(s.lastHashes) && t.HashIDs[k] == s.lastHashes[k] {
		k++
	}
	hits = k
	s.lastHashes = t.HashIDs
	for _, h := range t.HashIDs[k:] {
		if _, ok := s.seen[h]; ok {
			hits++
		} else {
			s.seen[h] = struct{}{}
		}
	}
	s.next = i + 1
	return len(t.HashIDs), hits
}
