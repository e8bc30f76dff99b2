// Package jsonbound reads untrusted JSON in time linear in its length, at
// any depth and without recursion: a validating tokenizer, the canonical
// digest of AEP-0003 §9.3 computed in one streaming pass, and Bound, which
// replaces the values of a payload that are too big or too deep to hand to
// a table with placeholders that still carry their digests.
package jsonbound
