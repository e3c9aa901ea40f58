package maca

// mxsmlPresence is the conformance suite's Presence: the fake MXSML told the
// devices the driver's fake describes (record_tiers compares both tiers'
// records).
var mxsmlPresence = fakeMXSML.Told("FAKE_MXSML_", nil)
