package main

import (
	"fmt"
	"slices"
)

// spread is the median of some per-round figures and their range: the
// median is what a goal is judged on, the range how far one run can be
// trusted.
type spread struct {
	Median, Lo, Hi float64
	N              int
}

// spreadOf is the spread of xs, leaving out zeros (a round that did not
// measure); the zero spread when none is left.
func spreadOf(xs []float64) spread {
	var v []float64
	for _, x := range xs {
		if x > 0 {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return spread{}
	}
	slices.Sort(v)
	s := spread{Lo: v[0], Hi: v[len(v)-1], N: len(v), Median: v[len(v)/2]}
	if len(v)%2 == 0 {
		s.Median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return s
}

func (s spread) String() string {
	if s.N < 2 {
		return fmt.Sprintf("%.3f×", s.Median)
	}
	return fmt.Sprintf("%.3f× (%.3f–%.3f over %d rounds)", s.Median, s.Lo, s.Hi, s.N)
}

// roundRatios is each round's ratio of a client's figure to the base's in
// the same round; 0 where either is missing. inverse turns a cost (CPU
// per page) into a speed, so that above 1 is always better.
func roundRatios(client, base []float64, inverse bool) []float64 {
	out := make([]float64, min(len(client), len(base)))
	for i := range out {
		if client[i] <= 0 || base[i] <= 0 {
			continue
		}
		if inverse {
			out[i] = base[i] / client[i]
		} else {
			out[i] = client[i] / base[i]
		}
	}
	return out
}

// roundDiffs is each round's client figure less the base's in the same
// round, for the rounds where both measured.
func roundDiffs(client, base []float64) []float64 {
	var out []float64
	for i := range min(len(client), len(base)) {
		if client[i] > 0 && base[i] > 0 {
			out = append(out, client[i]-base[i])
		}
	}
	return out
}

// medianOf is the median of xs, which may be negative; 0 for none.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	v := slices.Clone(xs)
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}
