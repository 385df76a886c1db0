package knee

import "context"

// ReadAnalyze reads every arm of the results under dir (Read) and finds
// each one's knee with o (Analyze), in Read's order; no arm is no error.
func ReadAnalyze(ctx context.Context, dir string, o Options) ([]*Result, error) {
	arms, err := Read(ctx, dir)
	if err != nil {
		return nil, err
	}
	rs := make([]*Result, len(arms))
	for i, a := range arms {
		rs[i] = Analyze(a, o)
	}
	return rs, nil
}
