"""Reading what users write: files, YAML, Python modules, CloudFormation templates, prices: to a topology
or every problem."""
