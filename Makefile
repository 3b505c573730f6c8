PYTHON ?= python3

.PHONY: test serve check-contract

# Every test, standard library only.
test:
	$(PYTHON) -m unittest discover -s tests -t .

serve:
	$(PYTHON) -m flowmem serve

# Run the independent contract checker against a server you started (ENDPOINT=...).
ENDPOINT ?= http://127.0.0.1:8000
check-contract:
	$(PYTHON) tools/contract_check.py --endpoint $(ENDPOINT)
