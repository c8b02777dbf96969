"""Diagnosis: the batching verdict from run facts and the detectors' findings, symptom attribution, the priced fix."""
