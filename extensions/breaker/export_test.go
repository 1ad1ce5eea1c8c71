package breaker

// Dormant is how many domains are compacted now (see WithIdleTTL).
func (b *Breaker) Dormant() int { return b.dormantTotals().domains }
