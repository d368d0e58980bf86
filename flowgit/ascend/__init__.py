"""ascend: lead a vague recall up to the higher unit many session deposits already imply.

partitions -> deposits -> inferred edges -> units -> rank -> confirm -> narrative.
It reads, and writes nothing anywhere.
"""
