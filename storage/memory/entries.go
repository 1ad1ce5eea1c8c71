package memory

// entryBlock is how many entries one block of entries holds.
const entryBlock = 1024

// entries are the records in Seq order, in blocks: adding one never
// copies the others, so a Put that adds the millionth record holds the
// store's lock as briefly as one that adds the first (a slice's growth
// copied every record under it, with every reader waiting).
type entries struct {
	blocks [][]entry
	n      int
}

// at returns entry i; 0 <= i < n.
func (es *entries) at(i int) *entry { return &es.blocks[i/entryBlock][i%entryBlock] }

// add appends e.
func (es *entries) add(e entry) {
	if es.n%entryBlock == 0 {
		es.blocks = append(es.blocks, make([]entry, 0, entryBlock))
	}
	b := &es.blocks[len(es.blocks)-1]
	*b = append(*b, e)
	es.n++
}
