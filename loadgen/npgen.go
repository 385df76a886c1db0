package loadgen

import "math/bits"

// npRand is NumPy's default generator (np.random.default_rng(seed)): a
// PCG64 (128-bit LCG, XSL-RR output) whose state comes from a
// SeedSequence of the seed. aiperf 0.12.0 draws each agentic-replay
// lane's trajectory start with it (trajectory_source.py), so the
// built-in reproduces the same starts for the same trace set and seed.
type npRand struct {
	hi, lo       uint64 // 128-bit state
	incHi, incLo uint64 // 128-bit increment (odd)
}

// SeedSequence constants (numpy/random/bit_generator.pyx).
const (
	ssInitA    = 0x43b0d7e5
	ssMultA    = 0x931e8875
	ssInitB    = 0x8b51f9dd
	ssMultB    = 0x58f38ded
	ssMixL     = 0xca01f9dd
	ssMixR     = 0x4973f715
	ssPoolSize = 4
)

// PCG64's 128-bit multiplier.
const pcgMulHi, pcgMulLo = 0x2360ed051fc65da4, 0x4385df649fccf645

// newNPRand seeds as np.random.default_rng(seed) does for a
// non-negative integer seed.
func newNPRand(seed uint64) *npRand {
	// The entropy as 32-bit words, least significant first; 0 is [0].
	entropy := []uint32{uint32(seed)}
	if seed>>32 != 0 {
		entropy = append(entropy, uint32(seed>>32))
	}
	hashConst := uint32(ssInitA)
	hashmix := func(v uint32) uint32 {
		v ^= hashConst
		hashConst *= ssMultA
		v *= hashConst
		return v ^ v>>16
	}
	mix := func(x, y uint32) uint32 {
		r := ssMixL*x - ssMixR*y
		return r ^ r>>16
	}
	var pool [ssPoolSize]uint32
	for i := range pool {
		var e uint32
		if i < len(entropy) {
			e = entropy[i]
		}
		pool[i] = hashmix(e)
	}
	for src := range pool {
		for dst := range pool {
			if src != dst {
				pool[dst] = mix(pool[dst], hashmix(pool[src]))
			}
		}
	}
	// generate_state(4, uint64): eight 32-bit words, paired little-endian.
	var words [8]uint32
	hc := uint32(ssInitB)
	for i := range words {
		v := pool[i%ssPoolSize] ^ hc
		hc *= ssMultB
		v *= hc
		words[i] = v ^ v>>16
	}
	var s [4]uint64
	for i := range s {
		s[i] = uint64(words[2*i]) | uint64(words[2*i+1])<<32
	}
	// pcg64_set_seed: state s[0]:s[1], sequence s[2]:s[3].
	r := &npRand{}
	r.incHi = s[2]<<1 | s[3]>>63
	r.incLo = s[3]<<1 | 1
	r.step()
	var c uint64
	r.lo, c = bits.Add64(r.lo, s[1], 0)
	r.hi, _ = bits.Add64(r.hi, s[0], c)
	r.step()
	return r
}

func (r *npRand) step() {
	hi, lo := bits.Mul64(r.lo, pcgMulLo)
	hi += r.hi*pcgMulLo + r.lo*pcgMulHi
	var c uint64
	r.lo, c = bits.Add64(lo, r.incLo, 0)
	r.hi, _ = bits.Add64(hi, r.incHi, c)
}

// uint64 is PCG64's next output.
func (r *npRand) uint64() uint64 {
	r.step()
	return bits.RotateLeft64(r.hi^r.lo, -int(r.hi>>58))
}

// float64 is Generator.random(): 53 random bits in [0, 1).
func (r *npRand) float64() float64 {
	return float64(r.uint64()>>11) * (1.0 / 9007199254740992.0)
}

// uniform is Generator.uniform(lo, hi).
func (r *npRand) uniform(lo, hi float64) float64 {
	return lo + (hi-lo)*r.float64()
}
