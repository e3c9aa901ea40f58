package kunlunxin

// xpumlPresence is the conformance suite's Presence: the fake XPUML told the
// devices the driver's fake describes (record_tiers compares both tiers'
// records).
var xpumlPresence = fakeXPUML.Told("FAKE_XPUML_", nil)
