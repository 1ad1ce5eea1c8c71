package validate

// Live returns the number of requests whose scoring state the validator
// still holds; tests use it to prove the table does not leak.
func (v *Validator) Live() int { return v.pages.len() }
