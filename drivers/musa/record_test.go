package musa

// mtmlPresence is the conformance suite's Presence: the fake MTML told the
// devices the driver's fake describes (record_tiers compares both tiers'
// records).
var mtmlPresence = fakeMTML.Told("FAKE_MTML_", nil)
