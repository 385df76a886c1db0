package loadgen

// simCall is what a request on the virtual clock carries: the
// participant sending it and its simulated arrival time, the simulated
// times at which the load generator would time it out (request timeout)
// or cancel it (end of a grace period), and the prompt by block ids.
type simCall struct {
	part      string
	at        float64
	timeoutAt float64 // +Inf: none
	cancelAt  float64 // +Inf: none
	prompt    *simPrompt
	// then, when positive, declares that the participant sleeps then
	// seconds (idle-gap cap thenCap) once the request ends normally,
	// unless that wake-up is at or after before (X-Sim-Then).
	then, thenCap, before float64
}

// simPrompt is the simulated engine's sweep_sim_prompt extension: the
// prompt by the content ids of its blocks of BlockTokens tokens.
type simPrompt struct {
	Tokens      int    `json:"tokens"`
	BlockTokens int    `json:"block_tokens"`
	Blocks      []byte `json:"blocks"`
	Key         string `json:"key,omitempty"`    // the session, whose ids the engine keeps
	Reuse       int    `json:"reuse,omitempty"`  // leading ids of the last prompt under Key, not sent again
	Forget      bool   `json:"forget,omitempty"` // the session's last turn: the engine drops its ids
}

// deadline is the earlier of the two limits (+Inf: none).
func (c *simCall) deadline() float64 { return min(c.timeoutAt, c.cancelAt) }
