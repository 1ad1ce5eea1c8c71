package keyslot

import "testing"

// The CRC check value of CRC-16/XMODEM, as the Redis Cluster
// specification gives it.
func TestCRC16CheckValue(t *testing.T) {
	if got := CRC16("123456789"); got != 0x31C3 {
		t.Fatalf("CRC16(%q) = %#04x, want 0x31c3", "123456789", got)
	}
}

// Slots as `redis-cli cluster keyslot KEY` reports them, and the hash tag
// rules of the Redis Cluster specification.
func TestOf(t *testing.T) {
	for key, want := range map[string]int{
		"foo":                  12182,
		"bar":                  5061,
		"{user1000}.following": 3443,
		"{user1000}.followers": 3443,
		"user1000":             3443,
		"":                     0,
	} {
		if got := Of(key); got != want {
			t.Errorf("Of(%q) = %d, want %d", key, got, want)
		}
	}
	for key, hashed := range map[string]string{
		"foo{}{bar}":    "foo{}{bar}", // an empty tag: the whole key
		"foo{{bar}}zap": "{bar",       // up to the first '}' after the first '{'
		"foo{bar}{zap}": "bar",        // the first tag only
		"foo{bar":       "foo{bar",    // no closing brace: the whole key
	} {
		if got, want := Of(key), int(CRC16(hashed)%Slots); got != want {
			t.Errorf("Of(%q) = %d, want the slot of %q, %d", key, got, hashed, want)
		}
	}
}
