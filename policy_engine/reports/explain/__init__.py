"""``explain``: its view (one share in sentences and, with ``--scenario``, why its jobs waited, ``view``) and its
formats: text, JSON."""
