package cache

// Load returns the value cached for key or, on a miss, the one load reads,
// caching it unless an Invalidate happened while load ran (Generation is
// read before it). An error of load is returned and nothing is cached, so
// what was not found is looked up again next time.
func (c *Cache[V]) Load(key string, load func() (V, error)) (V, error) {
	if v, ok := c.Get(key); ok {
		return v, nil
	}
	gen := c.Generation()
	v, err := load()
	if err != nil {
		var zero V
		return zero, err
	}
	c.Put(gen, key, v)
	return v, nil
}
