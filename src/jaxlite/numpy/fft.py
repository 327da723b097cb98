"""jaxlite.numpy.fft: placeholder, filled by the fft work."""

__all__ = []
