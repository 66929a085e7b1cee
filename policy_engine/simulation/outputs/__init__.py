"""What a finished (or stopped) run is read as: results, metrics, reasons for waiting, usage, calibration."""
