package simengine

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
)

// maxTokenBytes is the longest run of non-space bytes counted as one token.
const maxTokenBytes = 8

// CountTokens is the simulator's tokenizer: a token is a run of up to 8
// non-space bytes, and whitespace belongs to the token that follows it.
// So "hello world" is 2 tokens, a 20-letter word 3, and the synthetic
// output of N tokens is N words. Load generators that want exact prompt
// lengths can build prompts with it; usage fields always agree with it.
func CountTokens(s string) int {
	return scanTokens(s, 0, nil)
}

// scanTokens counts the tokens of s and, when every > 0, calls mark with
// the byte offset where token number k*every begins (k >= 1). A token
// begins right after the previous token's last byte.
func scanTokens(s string, every int, mark func(off int)) int {
	n, run, prevEnd := 0, 0, 0
	inTok := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\n', '\t', '\r':
			inTok = false
			continue
		}
		if !inTok || run == maxTokenBytes {
			if every > 0 && n > 0 && n%every == 0 {
				mark(prevEnd)
			}
			n++
			inTok, run = true, 0
		}
		run++
		prevEnd = i + 1
	}
	return n
}

// blockHashes returns the token count of text and the chained hashes of its
// full blocks of blockTokens tokens: hash i covers tokens [0, (i+1)*blockTokens),
// so equal hashes mean equal prefixes.
func blockHashes(seed maphash.Seed, text string, blockTokens int) (int, []uint64) {
	var cuts []int
	n := scanTokens(text, blockTokens, func(off int) { cuts = append(cuts, off) })
	if n%blockTokens == 0 && n > 0 {
		cuts = append(cuts, len(strings.TrimRight(text, " \n\t\r")))
	}
	hashes := make([]uint64, len(cuts))
	var h maphash.Hash
	h.SetSeed(seed)
	prev, start := uint64(0), 0
	var buf [8]byte
	for i, end := range cuts {
		h.Reset()
		binary.LittleEndian.PutUint64(buf[:], prev)
		_, _ = h.Write(buf[:])
		_, _ = h.WriteString(text[start:end])
		prev = h.Sum64()
		hashes[i], start = prev, end
	}
	return n, hashes
}

// SimPrompt is a prompt given by its cache blocks instead of its text, an
// extension the built-in load generator uses on the virtual clock so that
// an 80k-token prompt costs a few kB, not half a megabyte, per request:
// Tokens prompt tokens whose full blocks of BlockTokens tokens have the
// content ids in Blocks (little-endian uint64s; base64 in JSON), equal ids
// meaning equal block content.
type SimPrompt struct {
	Tokens      int    `json:"tokens"`
	BlockTokens int    `json:"block_tokens"`
	Blocks      []byte `json:"blocks"`
	// Key names the prompt's conversation: the engine keeps its ids so
	// that the next prompt under Key sends only the ids after the first
	// Reuse ones of this one (a turn extends its history). Forget drops
	// them (the conversation's last turn). A prompt whose Reuse ids the
	// engine does not have is answered 409 with X-Sim-Prompt: unknown, to
	// be sent again whole.
	Key    string `json:"key,omitempty"`
	Reuse  int    `json:"reuse,omitempty"`
	Forget bool   `json:"forget,omitempty"`
}

// simPrompts are the kept ids of the prompts by key (SimPrompt.Key).
type simPrompts struct {
	mu   sync.Mutex
	byID map[string][]byte
}

// resolve makes p.Blocks the prompt's whole id list (the kept ids it
// reuses, then its own) and keeps or forgets them under p.Key; false when
// the kept ids are fewer than p.Reuse.
func (sp *simPrompts) resolve(p *SimPrompt) bool {
	if p.Key == "" {
		return p.Reuse == 0
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	prev := sp.byID[p.Key]
	if p.Reuse < 0 || p.Reuse*8 > len(prev) {
		return false
	}
	full := make([]byte, 0, p.Reuse*8+len(p.Blocks))
	full = append(append(full, prev[:p.Reuse*8]...), p.Blocks...)
	p.Blocks, p.Reuse = full, 0
	if p.Forget {
		delete(sp.byID, p.Key)
	} else {
		if sp.byID == nil {
			sp.byID = map[string][]byte{}
		}
		sp.byID[p.Key] = full
	}
	return true
}

// hashes returns the prompt's token count and the chained hashes of its
// cache blocks of blockTokens tokens (a multiple of p.BlockTokens).
func (p *SimPrompt) hashes(seed maphash.Seed, blockTokens int) (int, []uint64, error) {
	if p.Tokens <= 0 || p.BlockTokens <= 0 || len(p.Blocks)%8 != 0 || len(p.Blocks)/8*p.BlockTokens > p.Tokens {
		return 0, nil, fmt.Errorf("sweep_sim_prompt: %d tokens, blocks of %d, %d bytes of ids: want tokens > 0 and full blocks of 8-byte ids within them", p.Tokens, p.BlockTokens, len(p.Blocks))
	}
	if blockTokens%p.BlockTokens != 0 {
		return 0, nil, fmt.Errorf("sweep_sim_prompt: blocks of %d tokens do not divide the engine's cache blocks of %d", p.BlockTokens, blockTokens)
	}
	per := blockTokens / p.BlockTokens
	n := len(p.Blocks) / 8 / per
	out := make([]uint64, n)
	var h maphash.Hash
	h.SetSeed(seed)
	var prev [8]byte
	for i := range n {
		h.Reset()
		_, _ = h.Write(prev[:])
		_, _ = h.Write(p.Blocks[i*per*8 : (i+1)*per*8])
		out[i] = h.Sum64()
		binary.LittleEndian.PutUint64(prev[:], out[i])
	}
	return p.Tokens, out, nil
}

// chatMessage is one OpenAI chat message as the simulator reads it.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// renderChat applies the simulator's chat template: the text whose tokens
// are the prompt. Equal message prefixes give equal text prefixes, so
// multi-turn sessions hit the prefix cache.
func renderChat(tools json.RawMessage, msgs []chatMessage) string {
	var b strings.Builder
	if len(tools) > 0 && string(tools) != "null" {
		b.WriteString("<|im_start|>tools\n")
		b.Write(tools)
		b.WriteString("<|im_end|>\n")
	}
	for _, m := range msgs {
		b.WriteString("<|im_start|>")
		b.WriteString(m.Role)
		b.WriteByte('\n')
		writeContent(&b, m.Content)
		if len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" {
			b.WriteByte('\n')
			b.Write(m.ToolCalls)
		}
		b.WriteString("<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

// writeContent writes a message content: a string, or the text parts of a
// content array (other parts are written as their JSON).
func writeContent(b *strings.Builder, raw json.RawMessage) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		b.WriteString(s)
		return
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		for i, p := range parts {
			if i > 0 {
				b.WriteByte('\n')
			}
			if p.Type == "text" {
				b.WriteString(p.Text)
			} else {
				b.Write(raw)
			}
		}
		return
	}
	b.Write(raw)
}

// vocabulary is the synthetic output: short words, each one token.
var vocabulary = strings.Fields(`the of and to in is that for it as with was on be by this are from or
an at not have but which one all their there can has more when will would about if into
its some than out other time only new these two may first then do any like my now over
such our man me even most made after also did many before must through back years where
much your way well down should because each just those people how too little state good
very make world still own see men work long get here between both life being under never
day same another know while last might us great old year off come since against go came
right used take three code file test build value error return func type list map run`)

// outputText is the synthetic completion: n words from a per-request
// random stream, each preceded by a space.
func outputText(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n * 6)
	for range n {
		b.WriteByte(' ')
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	return b.String()
}

// naturalLength draws the length at which a request would stop on its own
// (EOS) when ignore_eos is off: log-normal, median 350 tokens.
func naturalLength(rng *rand.Rand) int {
	return max(1, int(math.Exp(math.Log(350)+0.8*rng.NormFloat64())))
}
