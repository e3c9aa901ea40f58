package dl

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

const (
	testPasswd = `root:x:0:0:root:/root:/bin/bash
# a comment

alice:x:1000:1000:Alice:/home/alice:/bin/bash
bob:x:1001:100:Bob:/home/bob:/bin/bash
carol:x:1002:100::/home/carol:/bin/sh
dave:x:1003:1003::/home/dave:/bin/sh
erin:x:1004:1004::/home/erin:/bin/sh
`
	testGroup = `root:x:0:
users:x:100:
alice:x:1000:
dave:x:1003:mallory
erin:x:1004:erin
staff:x:50:alice
`
)

func TestPrivateGroup(t *testing.T) {
	a := parseAccounts([]byte(testPasswd), []byte(testGroup))
	for _, c := range []struct {
		name     string
		gid, uid uint32
		want     bool
	}{
		{"alice's private group", 1000, 1000, true},
		{"erin listed in her own group", 1004, 1004, true},
		{"someone else's private group", 1000, 1001, false},
		{"a shared primary group", 100, 1001, false},
		{"another member listed", 1003, 1003, false},
		{"a supplementary group of one, not primary", 50, 1000, true},
		{"an unknown group", 4242, 1000, false},
		{"an unknown user", 1000, 4242, false},
	} {
		assert.Equal(t, c.want, a.privateTo(c.gid, c.uid), c.name)
	}
	var none *accounts
	assert.False(t, none.privateTo(1000, 1000))
	nis := parseAccounts([]byte(testPasswd+"+::::::\n"), []byte(testGroup))
	assert.False(t, nis.privateTo(1000, 1000), "NIS lines: the files do not tell")
	bad := parseAccounts([]byte(testPasswd), []byte(testGroup+"broken\n"))
	assert.False(t, bad.privateTo(1000, 1000), "an unreadable line: the files do not tell")
}

func FuzzAccounts(f *testing.F) {
	f.Add([]byte(testPasswd), []byte(testGroup), uint32(1000), uint32(1000))
	f.Add([]byte("a:b:c:d"), []byte("::::,,,"), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, passwd, group []byte, gid, uid uint32) {
		a := parseAccounts(passwd, group)
		if a.privateTo(gid, uid) {
			// Then the group exists and no other user has it as primary.
			found := false
			for _, g := range a.groups {
				found = found || g.gid == gid
			}
			for _, u := range a.users {
				if u.gid == gid && u.uid != uid {
					t.Fatalf("gid %d is also %s's primary group", gid, u.name)
				}
			}
			if !found || a.incomplete {
				t.Fatalf("private group %d of %d from incomplete or missing data", gid, uid)
			}
		}
	})
}
