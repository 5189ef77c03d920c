"""The service's edge over HTTP: what a request may send (body sizes, nesting, pace), whose
forwarded address is believed, what the access log keeps, and headers built from names."""
