"""The only package that imports pyspark: the record path of each flow."""
