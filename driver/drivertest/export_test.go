package drivertest

// CaseNames are the kit's cases, in the table's order.
func CaseNames() []string {
	out := make([]string, len(cases))
	for i, c := range cases {
		out[i] = c.name
	}
	return out
}

// CaseNeeds are the features each case needs.
func CaseNeeds() map[string][]string {
	out := map[string][]string{}
	for _, c := range cases {
		out[c.name] = c.needs
	}
	return out
}

// Features are the features driver.Vendor.Unbound can name.
var Features = kitFeatures

// LibraryCases are the cases that build and load the fake (all but the
// table's checks of the Vendor description) and apply to s's vendor.
func (s *Suite) LibraryCases() []string {
	var out []string
	for _, c := range cases {
		if c.table != nil || s.notApplicable(c.needs) != "" || (c.skip != nil && c.skip(s) != "") {
			continue
		}
		out = append(out, c.name)
	}
	return out
}
