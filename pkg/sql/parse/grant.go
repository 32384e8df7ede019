package parse

import "strings"

// onCluster reports whether the GRANT or REVOKE at the cursor is ON CLUSTER.
func (c *cursor) onCluster() bool {
	for k := 1; c.i+k+1 < len(c.toks); k++ {
		if c.peekAt(k).is("on") {
			return c.peekAt(k + 1).is("cluster")
		}
	}
	return false
}

// grantCluster parses GRANT privs ON CLUSTER names TO roles and REVOKE
// privs ON CLUSTER names FROM roles.
func (c *cursor) grantCluster() (Statement, error) {
	s := &GrantCluster{SQL: c.sql, Revoke: c.peek().is("revoke")}
	c.i++
	if c.accept("all") {
		c.accept("privileges")
	} else {
		for {
			p, err := c.ident()
			if err != nil {
				return nil, err
			}
			s.Privileges = append(s.Privileges, strings.ToUpper(p))
			if !c.acceptSym(",") {
				break
			}
		}
	}
	if err := c.expect("on", "cluster"); err != nil {
		return nil, err
	}
	for {
		name, err := c.ident()
		if err != nil {
			return nil, err
		}
		s.Clusters = append(s.Clusters, name)
		if !c.acceptSym(",") {
			break
		}
	}
	to := "to"
	if s.Revoke {
		to = "from"
	}
	if err := c.expect(to); err != nil {
		return nil, err
	}
	for {
		if c.accept("public") {
			s.Grantees = append(s.Grantees, "")
		} else {
			name, err := c.ident()
			if err != nil {
				return nil, err
			}
			s.Grantees = append(s.Grantees, name)
		}
		if !c.acceptSym(",") {
			break
		}
	}
	if s.Revoke && !c.accept("cascade") {
		c.accept("restrict")
	}
	return s, c.end()
}
