"""Vector stores as sources (``docs/stores.md``): a collection's passages and stored vectors read with each store's official client.

One record per store kind (:mod:`core.stores.kinds`): its URI, the client
package, the reader class and what the kind can do; the CLI's help and the
app's fields are built from the records.  A shared app opens only the stores
its operator allows (:mod:`core.stores.access`).  Each reader opens the store read-only where the
client allows it and never writes to it; the connection string's password is
registered with the one redaction (:func:`core.messages.register_secret`)
before anything is opened.
"""
