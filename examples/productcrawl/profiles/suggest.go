package profiles

import "strings"

// units are the suffixes a duration field may be written with by mistake.
var units = []string{"_seconds", "_secs", "_sec", "_s", "_milliseconds", "_millis", "_ms", "_minutes", "_min", "_m"}

func stripUnit(key string) string {
	for _, u := range units {
		if base, ok := strings.CutSuffix(key, u); ok {
			return base
		}
	}
	return key
}

// suggest returns a hint for an unknown key: the known key it most likely
// means, or the list of known keys.
func suggest(key string, known []string) string {
	for _, k := range known {
		if stripUnit(k) == stripUnit(key) && k != key {
			if f := byKey[k]; f != nil && (f.kind == seconds || f.kind == millis) {
				unit := "seconds"
				if f.kind == millis {
					unit = "milliseconds"
				}
				return "; this setting is in " + unit + ": write " + k
			}
			return "; did you mean " + k + "?"
		}
	}
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return "; did you mean " + best + "?"
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
