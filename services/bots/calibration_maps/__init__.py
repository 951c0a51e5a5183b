"""Fitted calibration maps of the review's win chances, one ``<title>.json`` each
(:mod:`services.bots.calibration`)."""
