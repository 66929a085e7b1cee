"""The self-contained HTML pages (``simulate --report``, ``sweep``/``tune --report``), their script and summary PNGs."""
