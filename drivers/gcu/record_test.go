package gcu

// efmlPresence is the conformance suite's Presence: the fake EFML told the
// devices the driver's fake describes (record_tiers compares both tiers'
// records).
var efmlPresence = fakeEFML.Told("FAKE_EFML_", nil)
